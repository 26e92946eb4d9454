/*
 * sylib.h - the SysY runtime library interface (SysY2022).
 *
 * Every SysY program is linked against this library; the source never declares
 * these functions.  The compiler rewrites `starttime()` / `stoptime()` into calls
 * to `_sysy_starttime(__LINE__)` / `_sysy_stoptime(__LINE__)`.
 */
#ifndef SYSY_SYLIB_H
#define SYSY_SYLIB_H

#ifdef __cplusplus
extern "C" {
#endif

/* Input: scanf-based readers. */
int getint(void);
int getch(void);
float getfloat(void);
int getarray(int a[]);
int getfarray(float a[]);

/* Output: printf-based writers. */
void putint(int a);
void putch(int a);
void putfloat(float a);
void putarray(int n, int a[]);
void putfarray(int n, float a[]);
void putf(char fmt[], ...);

/* Timing: sum of the time between each start/stop pair, reported at exit. */
void _sysy_starttime(int lineno);
void _sysy_stoptime(int lineno);

#ifdef __cplusplus
}
#endif

#define starttime() _sysy_starttime(__LINE__)
#define stoptime() _sysy_stoptime(__LINE__)

#endif /* SYSY_SYLIB_H */
