/* status.h: the status codes every exactref function returns. */
#ifndef EXACTREF_STATUS_H
#define EXACTREF_STATUS_H

/* ---- Status codes: every function returns one; the library never prints and never exits. ---- */
typedef int er_status;
#define ER_OK 0
#define ER_EINVAL (-1)       /* an argument is invalid (unknown format id, null pointer, bad option) */
#define ER_ENOMEM (-2)       /* out of memory */
#define ER_EFORMAT (-3)      /* a format or rounding name is not known */
#define ER_EPATTERN (-4)     /* a bit pattern is not one of its format's (bits beyond the width, padding) */
#define ER_EINEXACT (-5)     /* a value is not exactly representable where it must be */
#define ER_EUNSUPPORTED (-6) /* the operation is not available in this build or on this device */
#define ER_ENODEVICE (-7)    /* no device of the requested backend */
#define ER_EDEVICE (-8)      /* the device or its driver failed (build, launch, memory, lost device) */

#endif /* EXACTREF_STATUS_H */
