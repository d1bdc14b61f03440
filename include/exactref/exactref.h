/* exactref.h: the public C API of exactref: the umbrella header, which includes every other. */
#ifndef EXACTREF_H
#define EXACTREF_H

#include "exactref/config.h"
#include "exactref/status.h"
#include "exactref/formats.h"
#include "exactref/mma.h"
#include "exactref/result.h"
#include "exactref/ops.h"
#include "exactref/scaled.h"
#include "exactref/interval.h"
#include "exactref/backends.h"
#include "exactref/math.h"
#include "exactref/report.h"
#include "exactref/check.h"
#include "exactref/npy.h"
#include "exactref/interp.h"

#endif /* EXACTREF_H */
