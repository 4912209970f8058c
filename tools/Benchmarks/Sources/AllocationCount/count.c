#include "AllocationCount.h"

#if defined(__linux__) && defined(__GLIBC__)
#include <errno.h>
#include <stdatomic.h>
#include <stddef.h>

// glibc's own allocator, under the names it keeps for wrappers like these.
extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t count, size_t size);
extern void *__libc_realloc(void *pointer, size_t size);
extern void *__libc_memalign(size_t alignment, size_t size);

static _Atomic int counting;
static __thread uint64_t on_this_thread;
static _Atomic uint64_t everywhere;

static inline void counted(void) {
    if (atomic_load_explicit(&counting, memory_order_relaxed)) {
        on_this_thread += 1;
        atomic_fetch_add_explicit(&everywhere, 1, memory_order_relaxed);
    }
}

void *malloc(size_t size) { counted(); return __libc_malloc(size); }
void *calloc(size_t count, size_t size) { counted(); return __libc_calloc(count, size); }
void *realloc(void *pointer, size_t size) { counted(); return __libc_realloc(pointer, size); }
void *memalign(size_t alignment, size_t size) { counted(); return __libc_memalign(alignment, size); }
void *aligned_alloc(size_t alignment, size_t size) { counted(); return __libc_memalign(alignment, size); }

int posix_memalign(void **result, size_t alignment, size_t size) {
    // posix_memalign's own rule: a power of two, a multiple of a pointer's size.
    if (alignment % sizeof(void *) != 0 || (alignment & (alignment - 1)) != 0) return EINVAL;
    counted();
    void *pointer = __libc_memalign(alignment, size);
    if (pointer == NULL) return ENOMEM;
    *result = pointer;
    return 0;
}

int gamelog_allocations_countable(void) { return 1; }
void gamelog_count_allocations(int on) { atomic_store(&counting, on); }
uint64_t gamelog_allocations_on_this_thread(void) { return on_this_thread; }
uint64_t gamelog_allocations_everywhere(void) { return atomic_load(&everywhere); }

#else

int gamelog_allocations_countable(void) { return 0; }
void gamelog_count_allocations(int on) { (void)on; }
uint64_t gamelog_allocations_on_this_thread(void) { return 0; }
uint64_t gamelog_allocations_everywhere(void) { return 0; }

#endif
