// Counts heap allocations (malloc and its kin) made while counting is on, on the calling
// thread and on every thread: issue 40 asks for no allocation an event on the appending
// thread, and a count says so where a profile only hints. On Linux with glibc only (the
// executable's own malloc wraps glibc's); elsewhere nothing is counted.
#ifndef GAMELOG_ALLOCATION_COUNT_H
#define GAMELOG_ALLOCATION_COUNT_H

#include <stdint.h>

/// Whether this build counts (1) or not (0).
int gamelog_allocations_countable(void);
/// Starts (1) or stops (0) counting. Off, an allocation costs one branch more.
void gamelog_count_allocations(int on);
/// Allocations counted on the calling thread so far.
uint64_t gamelog_allocations_on_this_thread(void);
/// Allocations counted on every thread so far.
uint64_t gamelog_allocations_everywhere(void);

#endif
