// cxxwork.cc — the C++ binary of the symbolize benchmark (bench/run.sh, F), built with g++ -O2 -g: templates
// instantiated for several types, code inlined a few levels deep, namespaces, classes with virtual functions,
// lambdas and the standard containers and algorithms (whose inline code ends up in this binary's .text), so
// that its DWARF has what C++ symbolization must get right: mangled linkage names, inline chains through
// headers, and functions in namespaces and templates. Run, it prints a checksum of its work.
#include <algorithm>
#include <cstdint>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <numeric>
#include <set>
#include <sstream>
#include <string>
#include <unordered_map>
#include <vector>

namespace bench {
namespace geometry {

template <typename T> struct Vec {
	T x, y, z;
	Vec operator+(const Vec &o) const { return {x + o.x, y + o.y, z + o.z}; }
	Vec operator*(T k) const { return {x * k, y * k, z * k}; }
	T dot(const Vec &o) const { return x * o.x + y * o.y + z * o.z; }
};

class Shape {
public:
	virtual ~Shape() = default;
	virtual double area() const = 0;
	virtual std::string name() const = 0;
};

class Circle : public Shape {
	double r_;

public:
	explicit Circle(double r) : r_(r) {}
	double area() const override { return 3.141592653589793 * r_ * r_; }
	std::string name() const override { return "circle"; }
};

class Rect : public Shape {
	double w_, h_;

public:
	Rect(double w, double h) : w_(w), h_(h) {}
	double area() const override { return w_ * h_; }
	std::string name() const override { return "rect"; }
};

} // namespace geometry

namespace algo {

template <typename T, typename Less = std::less<T>> void insertion_sort(std::vector<T> &v, Less less = Less()) {
	for (size_t i = 1; i < v.size(); i++)
		for (size_t j = i; j > 0 && less(v[j], v[j - 1]); j--)
			std::swap(v[j], v[j - 1]);
}

template <typename Container> auto sum(const Container &c) {
	typename Container::value_type s{};
	for (const auto &e : c)
		s = s + e;
	return s;
}

template <typename K, typename V> std::vector<std::pair<K, V>> top(const std::unordered_map<K, V> &m, size_t n) {
	std::vector<std::pair<K, V>> v(m.begin(), m.end());
	std::sort(v.begin(), v.end(), [](const auto &a, const auto &b) {
		return a.second != b.second ? a.second > b.second : a.first < b.first;
	});
	if (v.size() > n)
		v.resize(n);
	return v;
}

inline uint64_t mix(uint64_t h) {
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	return h;
}

template <typename T> uint64_t hash_all(const std::vector<T> &v) {
	uint64_t h = 0;
	for (const auto &e : v)
		h = mix(h ^ std::hash<T>()(e));
	return h;
}

} // namespace algo

namespace text {

std::vector<std::string> split(const std::string &s, char sep) {
	std::vector<std::string> out;
	std::stringstream ss(s);
	std::string item;
	while (std::getline(ss, item, sep))
		out.push_back(item);
	return out;
}

std::unordered_map<std::string, int> count_words(const std::vector<std::string> &words) {
	std::unordered_map<std::string, int> m;
	for (const auto &w : words)
		m[w]++;
	return m;
}

} // namespace text
} // namespace bench

int main(int argc, char **argv) {
	using namespace bench;
	int n = argc > 1 ? std::atoi(argv[1]) : 20000;

	std::vector<std::unique_ptr<geometry::Shape>> shapes;
	for (int i = 0; i < n; i++) {
		if (i % 3)
			shapes.push_back(std::make_unique<geometry::Circle>(i % 17));
		else
			shapes.push_back(std::make_unique<geometry::Rect>(i % 5, i % 11));
	}
	std::map<std::string, double> by_name;
	for (const auto &s : shapes)
		by_name[s->name()] += s->area();

	std::vector<geometry::Vec<double>> vd;
	std::vector<geometry::Vec<int>> vi;
	for (int i = 0; i < 1000; i++) {
		vd.push_back({i * 0.5, i * 0.25, i * 0.125});
		vi.push_back({i, i * 2, i * 3});
	}
	auto sd = algo::sum(vd) * 2.0;
	auto si = algo::sum(vi);

	std::ostringstream text;
	for (int i = 0; i < n; i++)
		text << "w" << (i * 7919 % 997) << ' ';
	auto words = text::split(text.str(), ' ');
	auto counts = text::count_words(words);
	auto best = algo::top(counts, 10);

	std::vector<int> ints(2000);
	std::iota(ints.begin(), ints.end(), 0);
	std::reverse(ints.begin(), ints.end());
	algo::insertion_sort(ints);
	std::vector<std::string> strs(words.begin(), words.begin() + std::min<size_t>(words.size(), 500));
	algo::insertion_sort(strs, [](const std::string &a, const std::string &b) { return a.size() < b.size() || (a.size() == b.size() && a < b); });
	std::set<std::string> uniq(strs.begin(), strs.end());

	std::function<uint64_t(int)> fib = [&](int k) -> uint64_t { return k < 2 ? k : fib(k - 1) + fib(k - 2); };

	std::cout << by_name.size() << ' ' << sd.dot(sd) << ' ' << si.dot(si) << ' ' << best.front().first << ' '
		  << algo::hash_all(ints) << ' ' << algo::hash_all(strs) << ' ' << uniq.size() << ' ' << fib(20) << '\n';
	return 0;
}
