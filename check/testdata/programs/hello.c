/* A small C program as a user would write it: two functions, stdio, a
   call that does not return on the error path. check's tests build it
   with gcc -Wa,--gsframe for every target, PIE, static and as a shared
   library, and expect no error. */
#include <stdio.h>
#include <stdlib.h>

__attribute__((noinline)) int greet(const char *who, int n)
{
	if (who == NULL)
		abort();
	for (int i = 0; i < n; i++)
		printf("hello, %s (%d)\n", who, i);
	return n;
}

int main(int argc, char **argv)
{
	int n = greet(argc > 1 ? argv[1] : "world", argc);
	if (n > 100)
		exit(3);
	return n == 1 ? 0 : 1;
}
