#include <jansson.h>
