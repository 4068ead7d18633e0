extern int ext(void *, void *);
int drap(int n)
{
	int a[n + 1];
	int b[16] __attribute__((aligned(64)));
	b[3] = n;
	a[0] = ext(b, a);
	return a[0] + b[n & 15];
}
