// check/: fmt's out-of-line definitions (its format-inl.h, and the templates its headers declare
// `extern` or leave to the library), compiled into libheapgraph_scan.so. So the plugin needs no
// libfmt.so, and through it no libstdc++.so either: it links libstdc++ statically. Loading
// libstdc++.so into a C program (a shell, a compiler driver, as, ld, make, python3, git) for its
// at-exit check cost ≈ 0.75 ms of dynamic linking per process (docs/performance.md, session 20).
#include <fmt/format-inl.h>

FMT_BEGIN_NAMESPACE
namespace detail {

template FMT_API auto dragonbox::to_decimal(float x) noexcept -> dragonbox::decimal_fp<float>;
template FMT_API auto dragonbox::to_decimal(double x) noexcept -> dragonbox::decimal_fp<double>;

template FMT_API auto thousands_sep_impl(locale_ref) -> thousands_sep_result<char>;
template FMT_API auto decimal_point_impl(locale_ref) -> char;
template FMT_API void buffer<char>::append(const char*, const char*);
template FMT_API void vformat_to(buffer<char>&, string_view,
                                 basic_format_args<FMT_BUFFER_CONTEXT(char)>, locale_ref);

}  // namespace detail
FMT_END_NAMESPACE
