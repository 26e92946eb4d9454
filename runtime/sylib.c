/*
 * sylib.c - the SysY runtime library (SysY2022 API), our own implementation.
 *
 * Input uses scanf, output printf, exactly as SYSY.md specifies (getfloat uses
 * "%a", which in C99 accepts decimal and hexadecimal floats; putfloat prints
 * "%a").  The timer functions sum the wall time between each
 * _sysy_starttime/_sysy_stoptime pair; a destructor prints one
 * "Timer@LLLL-LLLL: H-M-S-us" line per pair and a "TOTAL: ..." line to stderr
 * at exit, after flushing stdout.
 */
#include "sylib.h"

#include <stdarg.h>
#include <stdio.h>
#include <sys/time.h>

/* ---------------------------------------------------------------- input */

int getint(void) {
    int t = 0;
    if (scanf("%d", &t) != 1) {
        return 0;
    }
    return t;
}

int getch(void) {
    char c;
    if (scanf("%c", &c) != 1) {
        return -1;
    }
    return (int)c;
}

float getfloat(void) {
    float f = 0.0f;
    if (scanf("%a", &f) != 1) {
        return 0.0f;
    }
    return f;
}

int getarray(int a[]) {
    int n = getint();
    for (int i = 0; i < n; i++) {
        a[i] = getint();
    }
    return n;
}

int getfarray(float a[]) {
    int n = getint();
    for (int i = 0; i < n; i++) {
        a[i] = getfloat();
    }
    return n;
}

/* --------------------------------------------------------------- output */

void putint(int a) { printf("%d", a); }

void putch(int a) { printf("%c", a); }

void putfloat(float a) { printf("%a", a); }

void putarray(int n, int a[]) {
    printf("%d:", n);
    for (int i = 0; i < n; i++) {
        printf(" %d", a[i]);
    }
    printf("\n");
}

void putfarray(int n, float a[]) {
    printf("%d:", n);
    for (int i = 0; i < n; i++) {
        printf(" %a", a[i]);
    }
    printf("\n");
}

void putf(char fmt[], ...) {
    va_list args;
    va_start(args, fmt);
    vprintf(fmt, args);
    va_end(args);
}

/* ---------------------------------------------------------------- timer */

#define SYSY_MAX_TIMERS 1024

static struct timeval sysy_start;
static int sysy_running;
static int sysy_start_line[SYSY_MAX_TIMERS];
static int sysy_stop_line[SYSY_MAX_TIMERS];
static long long sysy_pair_us[SYSY_MAX_TIMERS];
static int sysy_pairs;
static long long sysy_total_us;

void _sysy_starttime(int lineno) {
    if (sysy_pairs < SYSY_MAX_TIMERS) {
        sysy_start_line[sysy_pairs] = lineno;
    }
    sysy_running = 1;
    gettimeofday(&sysy_start, NULL);
}

void _sysy_stoptime(int lineno) {
    struct timeval now;
    gettimeofday(&now, NULL);
    if (!sysy_running) {
        return;
    }
    sysy_running = 0;
    long long us = (long long)(now.tv_sec - sysy_start.tv_sec) * 1000000LL +
                   (long long)(now.tv_usec - sysy_start.tv_usec);
    if (sysy_pairs < SYSY_MAX_TIMERS) {
        sysy_stop_line[sysy_pairs] = lineno;
        sysy_pair_us[sysy_pairs] = us;
    }
    sysy_pairs++;
    sysy_total_us += us;
}

static void sysy_print_duration(long long us) {
    long long h = us / 3600000000LL;
    us %= 3600000000LL;
    long long m = us / 60000000LL;
    us %= 60000000LL;
    long long s = us / 1000000LL;
    us %= 1000000LL;
    fprintf(stderr, "%lldH-%lldM-%lldS-%lldus\n", h, m, s, us);
}

__attribute__((destructor)) static void sysy_report_timers(void) {
    fflush(stdout);
    int shown = sysy_pairs < SYSY_MAX_TIMERS ? sysy_pairs : SYSY_MAX_TIMERS;
    for (int i = 0; i < shown; i++) {
        fprintf(stderr, "Timer@%04d-%04d: ", sysy_start_line[i], sysy_stop_line[i]);
        sysy_print_duration(sysy_pair_us[i]);
    }
    fprintf(stderr, "TOTAL: ");
    sysy_print_duration(sysy_total_us);
    fflush(stderr);
}
