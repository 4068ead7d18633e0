#include <stdarg.h>
extern int ext(int, ...);
extern void *ext_p(void *);
int leaf(int a, int b) { return a * b + 3; }
int calls(int x) { return ext(x, 1) + ext(x, 2) + 1; }
int vla(int n) { int a[n]; for (int i = 0; i < n; i++) a[i] = ext(i); return a[n/2]; }
int aligned(int n) { int a[16] __attribute__((aligned(64))); for (int i = 0; i < 16; i++) a[i] = ext(i); return a[n & 15]; }
int drap(int n) { int a[n + 1]; int b[16] __attribute__((aligned(64))); b[3] = n; a[0] = ext(n, b, a); return a[0] + b[n&15]; }
int rec(int n) { return n < 2 ? n : rec(n - 1) + rec(n - 2); }
int va(int n, ...) { va_list ap; va_start(ap, n); int s = 0; for (int i = 0; i < n; i++) s += va_arg(ap, int); va_end(ap); return s; }
int big(int n) { volatile char buf[70000]; buf[n] = 1; ext(n, buf); return buf[n+1]; }
static int stat_helper(int *p) { return ext(p[0], p[1]); }
int uses_static(int a) { int v[2] = {a, a+1}; return stat_helper(v) * 2; }
void noret(int x) __attribute__((noreturn));
void noret(int x) { ext(x); for (;;) ext(x); }
int tail(int x) { return ext(x + 1); }
int many(int a, int b, int c, int d, int e, int f, int g, int h, int i, int j) { return ext(a+b+c+d+e, f+g+h+i+j) + a*j; }
