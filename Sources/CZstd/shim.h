#ifndef QUIRE_CZSTD_SHIM_H
#define QUIRE_CZSTD_SHIM_H
#include <zstd.h>
#include <zstd_errors.h>
#endif
