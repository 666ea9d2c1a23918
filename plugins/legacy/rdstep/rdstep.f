! SPDX-License-Identifier: MIT
C     RDSTEP: one explicit Euler step of the reaction-diffusion equation
C
C        du/dt = K * d2u/dx2 + u - u**3
C
C     on N points of unit spacing.
C
C     BC    'DIRICHLET' (u = 0 outside the grid) or 'PERIODIC'
C     N     number of points
C     U     the state, U(N)
C     DT    the time step
C     K     the diffusion coefficient
C     UOUT  the state after one step, UOUT(N)
C     INFO  0 on success, 1 for an unknown BC
C
      SUBROUTINE RDSTEP(BC, N, U, DT, K, UOUT, INFO)
      CHARACTER*(*) BC
      INTEGER N, INFO
      DOUBLE PRECISION U(N), DT, K, UOUT(N)
      INTEGER I
      LOGICAL PERIOD
      DOUBLE PRECISION UL, UR
      INFO = 0
      IF (BC .EQ. 'PERIODIC') THEN
         PERIOD = .TRUE.
      ELSE IF (BC .EQ. 'DIRICHLET') THEN
         PERIOD = .FALSE.
      ELSE
         INFO = 1
         RETURN
      END IF
      DO 10 I = 1, N
         CALL RDNBRS(PERIOD, N, U, I, UL, UR)
         UOUT(I) = U(I) + DT*(K*(UL - 2.0D0*U(I) + UR) + U(I) - U(I)**3)
   10 CONTINUE
      RETURN
      END
C
C     RDNBRS: the left and right neighbours UL, UR of point I.
C
      SUBROUTINE RDNBRS(PERIOD, N, U, I, UL, UR)
      LOGICAL PERIOD
      INTEGER N, I
      DOUBLE PRECISION U(N), UL, UR
      UL = 0.0D0
      UR = 0.0D0
      IF (I .GT. 1) THEN
         UL = U(I-1)
      ELSE IF (PERIOD) THEN
         UL = U(N)
      END IF
      IF (I .LT. N) THEN
         UR = U(I+1)
      ELSE IF (PERIOD) THEN
         UR = U(1)
      END IF
      RETURN
      END
