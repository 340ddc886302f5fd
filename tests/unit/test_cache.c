#include "harness.h"
const t_case t_cache_cases[] = {{NULL, NULL}};
