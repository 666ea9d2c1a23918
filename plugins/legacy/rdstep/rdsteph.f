! SPDX-License-Identifier: MIT
C     RDSTEPH: the second-order adjoint of RDSTEP, written by hand: the
C     derivative of RDSTEPB's UB, DTB, KB along a tangent UD, DTD, KD of
C     U, DT, K, for a fixed cotangent UOUTB (a Hessian-vector product).
C
C        UOUT(I) = U(I) + DT*(K*L(I) + U(I) - U(I)**3),
C        L(I)    = U(I-1) - 2*U(I) + U(I+1)
C
C     L is symmetric under either boundary condition, so with LW = L(UOUTB)
C     and LUD = L(UD), for each I (B = UOUTB(I)):
C        UH(I)  = DTD*(K*LW(I) + B*(1 - 3*U(I)**2)) + KD*DT*LW(I)
C                 - 6*DT*B*U(I)*UD(I)
C        DTH    = sum of B*(L(I)*KD + K*LUD(I) + (1 - 3*U(I)**2)*UD(I))
C        KH     = sum of B*(L(I)*DTD + DT*LUD(I))
C
C     UH, DTH and KH are set, not added to. INFO is 1 for an unknown BC.
C
      SUBROUTINE RDSTEPH(BC, N, U, DT, K, UOUTB, UD, DTD, KD,
     &                   UH, DTH, KH, INFO)
      CHARACTER*(*) BC
      INTEGER N, INFO
      DOUBLE PRECISION U(N), DT, K, UOUTB(N), UD(N), DTD, KD
      DOUBLE PRECISION UH(N), DTH, KH
      INTEGER I
      LOGICAL PERIOD
      DOUBLE PRECISION UL, UR, LAP, LW, LUD, B, S
      INFO = 0
      IF (BC .EQ. 'PERIODIC') THEN
         PERIOD = .TRUE.
      ELSE IF (BC .EQ. 'DIRICHLET') THEN
         PERIOD = .FALSE.
      ELSE
         INFO = 1
         RETURN
      END IF
      DTH = 0.0D0
      KH = 0.0D0
      DO 30 I = 1, N
         CALL RDNBRS(PERIOD, N, U, I, UL, UR)
         LAP = UL - 2.0D0*U(I) + UR
         CALL RDNBRS(PERIOD, N, UOUTB, I, UL, UR)
         LW = UL - 2.0D0*UOUTB(I) + UR
         CALL RDNBRS(PERIOD, N, UD, I, UL, UR)
         LUD = UL - 2.0D0*UD(I) + UR
         B = UOUTB(I)
         S = 1.0D0 - 3.0D0*U(I)**2
         UH(I) = DTD*(K*LW + B*S) + KD*DT*LW - 6.0D0*DT*B*U(I)*UD(I)
         DTH = DTH + B*(LAP*KD + K*LUD + S*UD(I))
         KH = KH + B*(LAP*DTD + DT*LUD)
   30 CONTINUE
      RETURN
      END
