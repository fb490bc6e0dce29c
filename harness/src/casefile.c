/* Case files (docs/CASES.md): being written. */
#include "mtp/generate.h"
