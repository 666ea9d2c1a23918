! SPDX-License-Identifier: MIT
C     RDSTEPB: the adjoint of RDSTEP, written by hand.
C
C     Given the cotangent UOUTB of UOUT, adds to UB, DTB and KB the
C     cotangents of U, DT and K (the caller zeroes them first):
C
C        UOUT(I) = U(I) + DT*(K*L(I) + U(I) - U(I)**3),
C        L(I)    = U(I-1) - 2*U(I) + U(I+1)
C
C     so, for each I,
C        DTB    += UOUTB(I) * (K*L(I) + U(I) - U(I)**3)
C        KB     += UOUTB(I) * DT * L(I)
C        UB(I)  += UOUTB(I) * (1 + DT*(1 - 2*K - 3*U(I)**2))
C        UB(J)  += UOUTB(I) * DT * K   for each neighbour J of I.
C
C     Arguments as RDSTEP; INFO is 1 for an unknown BC.
C
      SUBROUTINE RDSTEPB(BC, N, U, DT, K, UOUTB, UB, DTB, KB, INFO)
      CHARACTER*(*) BC
      INTEGER N, INFO
      DOUBLE PRECISION U(N), DT, K, UOUTB(N), UB(N), DTB, KB
      INTEGER I, IL, IR
      LOGICAL PERIOD
      DOUBLE PRECISION UL, UR, LAP, B
      INFO = 0
      IF (BC .EQ. 'PERIODIC') THEN
         PERIOD = .TRUE.
      ELSE IF (BC .EQ. 'DIRICHLET') THEN
         PERIOD = .FALSE.
      ELSE
         INFO = 1
         RETURN
      END IF
      DO 20 I = 1, N
         CALL RDNBRS(PERIOD, N, U, I, UL, UR)
         LAP = UL - 2.0D0*U(I) + UR
         B = UOUTB(I)
         DTB = DTB + B*(K*LAP + U(I) - U(I)**3)
         KB = KB + B*DT*LAP
         UB(I) = UB(I)
     &         + B*(1.0D0 + DT*(1.0D0 - 2.0D0*K - 3.0D0*U(I)**2))
C        a neighbour outside a Dirichlet boundary has no cotangent
         IL = I - 1
         IR = I + 1
         IF (PERIOD .AND. IL .LT. 1) IL = N
         IF (PERIOD .AND. IR .GT. N) IR = 1
         IF (IL .GE. 1) UB(IL) = UB(IL) + B*DT*K
         IF (IR .LE. N) UB(IR) = UB(IR) + B*DT*K
   20 CONTINUE
      RETURN
      END
