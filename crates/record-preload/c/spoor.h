/* spoor.h: phase marks for programs recorded by spoor-record.
 *
 *     #include <spoor.h>       compile with: mpicc -I"$(spoor-record --include-dir)" ...
 *     SPOOR_PHASE_BEGIN("solve");
 *     ...
 *     SPOOR_PHASE_END("solve");
 *
 * Under spoor-record, each mark is a phase_begin or phase_end event of the calling thread
 * (formats/trace.md), so `spoor-cp --phase solve`, `spoor-whatif --phase solve` and
 * `spoor-report --phase solve` can look at that stretch of the run. The functions come
 * from the recording library (libspoor_preload.so), which spoor-record preloads; they are
 * declared weak, so a program built with this header links without the library and, run
 * without spoor-record, the macros do nothing: the program compiles and runs the same.
 * A phase may begin and end several times (on several ranks and threads); a stretch runs
 * from its earliest begin to its latest end. Names are UTF-8; an empty name is ignored.
 *
 * MPI programs can mark phases without this header: MPI_Pcontrol(1, "solve") begins a
 * phase and MPI_Pcontrol(-1, "solve") ends it (IPM's convention; other levels record
 * nothing). Fortran: call spoor_phase_begin('solve') and call spoor_phase_end('solve')
 * (trailing blanks are trimmed); those need the library when the program is linked. */
#ifndef SPOOR_H
#define SPOOR_H

#ifdef __cplusplus
extern "C" {
#endif

/* Weak: null when the recording library is not loaded. */
void spoor_phase_begin(const char *name) __attribute__((weak));
void spoor_phase_end(const char *name) __attribute__((weak));

#ifdef __cplusplus
}
#endif

#define SPOOR_PHASE_BEGIN(name)                            \
    do {                                                   \
        if (spoor_phase_begin) spoor_phase_begin(name);    \
    } while (0)
#define SPOOR_PHASE_END(name)                              \
    do {                                                   \
        if (spoor_phase_end) spoor_phase_end(name);        \
    } while (0)

#endif /* SPOOR_H */
