// Intentionally empty: this target only provides CFuzzerHooks.h.
#include "CFuzzerHooks.h"
