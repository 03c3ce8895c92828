#ifndef QUIRE_CZIP_SHIM_H
#define QUIRE_CZIP_SHIM_H
#include <zip.h>
#endif
