/* SPDX-License-Identifier: MIT */
/*
 * The Van der Pol oscillator's value references (modelDescription.xml
 * lists the same): der(x0) = x1, der(x1) = mu (1 - x0^2) x1 - x0, y = x0.
 */
#ifndef VANDERPOL_H
#define VANDERPOL_H

enum {
    VDP_TIME = 0,
    VDP_X0 = 1,
    VDP_DER_X0 = 2,
    VDP_X1 = 3,
    VDP_DER_X1 = 4,
    VDP_MU = 5,
    VDP_Y = 6,
    VDP_N_VARS = 7,
};

#endif
