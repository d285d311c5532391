# cython: language_level=3
"""What this CPU runs: rbd_c/__init__.py asks before it imports the other modules, to
take their x86-64-v3 copy (setup.py) when the CPU has AVX2 and FMA and the rest of that
level.  This module exists once, compiled for the baseline."""

cdef extern from *:
    """
    static int rbd_cpu_x86_64_v3(void) {
    #if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && __GNUC__ >= 12
        __builtin_cpu_init();
        return __builtin_cpu_supports("x86-64-v3") != 0;
    #else
        return 0;  /* (the copy is only built by gcc on x86-64) */
    #endif
    }
    """
    int rbd_cpu_x86_64_v3() noexcept nogil


def x86_64_v3():
    """True when this CPU runs x86-64-v3 code (AVX, AVX2, BMI1/2, F16C, FMA, LZCNT, MOVBE)."""
    return bool(rbd_cpu_x86_64_v3())
