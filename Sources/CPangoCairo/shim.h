#ifndef QUIRE_CPANGOCAIRO_SHIM_H
#define QUIRE_CPANGOCAIRO_SHIM_H
#include <cairo.h>
#include <cairo-pdf.h>
#include <pango/pangocairo.h>
#endif
