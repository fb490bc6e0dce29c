/* Case files: being written. */
#include <criterion/criterion.h>
