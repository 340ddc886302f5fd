#include "harness.h"
const t_case t_invalidate_cases[] = {{NULL, NULL}};
