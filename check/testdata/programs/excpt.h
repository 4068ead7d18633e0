// Shared by excpt.cc and excpt2.cc: a template and an inline function
// used from both translation units (one COMDAT copy survives the link).
#include <stdexcept>
#include <string>
#include <vector>

template <typename T> T sum(const std::vector<T> &v)
{
	T s{};
	for (const T &x : v)
		s += x;
	return s;
}

inline int checked(int x)
{
	if (x < 0)
		throw std::invalid_argument("negative: " + std::to_string(x));
	return x * 2;
}

int fa(int n);
