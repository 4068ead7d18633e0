volatile int g_idx;
long g[16];
int g_112;
volatile int g_167;
long f(long a)
{
	int arr[42] = {0};
	arr[g_idx] = 1;
	long x0 = g[0], x1 = g[1];
	for (int i = 0; i < g_idx; i++) {
		x0 += x1 * a + arr[(i + 0) & 31];
		x1 += x0 * a + arr[(i + 1) & 31];
	}
	for (g_112 = 0; g_112 <= 9; g_112 += 1)
		g_167;
	return x0 + x1;
}
