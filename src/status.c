/* status.c: status codes and version. */
#include "exactref/exactref.h"

const char *er_status_string(er_status s)
{
    switch (s) {
    case ER_OK: return "success";
    case ER_EINVAL: return "invalid argument";
    case ER_ENOMEM: return "out of memory";
    case ER_EFORMAT: return "unknown format or rounding name";
    case ER_EPATTERN: return "bit pattern is not one of its format's";
    case ER_EINEXACT: return "value is not exactly representable in the format";
    case ER_EUNSUPPORTED: return "operation not available in this build";
    case ER_ENODEVICE: return "no device for the requested backend";
    case ER_EDEVICE: return "device or driver failure";
    default: return "unknown status";
    }
}

const char *er_version(void) { return ER_VERSION_STRING; }
