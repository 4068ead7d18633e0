// A C++ program with exceptions: throws, catches, cleanups (destructors
// run by landing pads), a template and an inline function shared with
// excpt2.cc. check's tests build it for every target and expect no error.
#include <cstdio>
#include <memory>
#include "excpt.h"

struct Guard {
	int *counter;
	explicit Guard(int *c) : counter(c) { ++*counter; }
	~Guard() { --*counter; }
};

static int live;

__attribute__((noinline)) int fb(int n)
{
	Guard g(&live);
	std::vector<int> v(n > 0 ? n : 1, n);
	return checked(n) + sum(v);
}

int main(int argc, char **argv)
{
	int total = 0;
	for (int i = -1; i < argc; i++) {
		try {
			total += fb(i) + fa(i);
		} catch (const std::exception &e) {
			std::printf("caught: %s\n", e.what());
			total--;
		}
	}
	auto p = std::make_unique<std::string>("done");
	std::printf("%s %d %d\n", p->c_str(), total, live);
	return total > 1000;
}
