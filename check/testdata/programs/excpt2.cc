// The second translation unit of the C++ test program (see excpt.cc).
#include "excpt.h"

__attribute__((noinline)) int fa(int n)
{
	std::vector<double> v{1.5, double(n)};
	try {
		return checked(n - 1) + int(sum(v));
	} catch (const std::invalid_argument &) {
		throw std::runtime_error("fa: " + std::to_string(n));
	} catch (...) {
		throw;
	}
}
