#ifndef GAMELOG_CSHA256_H
#define GAMELOG_CSHA256_H

#include <stddef.h>
#include <stdint.h>

/// SHA-256 of three byte ranges one after the other (a count of 0 skips a range),
/// written to `out` (32 bytes). The context lives on the stack: no allocation.
void gamelog_sha256(const void *first, size_t firstCount,
                    const void *second, size_t secondCount,
                    const void *third, size_t thirdCount,
                    uint8_t *out);

#endif
