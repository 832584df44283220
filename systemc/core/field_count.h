#pragma once
// The number of fields of an aggregate, at compile time. Used to pin a struct to the list of fields its
// serialiser names (nlohmann's type macros list fields by hand): a field added to the struct but not to
// the list fails to compile instead of silently vanishing from the JSON (metrics/run_result.h).
//
// How: an aggregate T with N fields can be brace-initialised from N values of a type that converts to
// anything, and not from N + 1. (Boost.PFR does this and more, but arrived in Boost 1.75; Debian 12
// ships 1.74.) The conversion never runs: it appears only in unevaluated operands.

#include <cstddef>
#include <type_traits>
#include <utility>

namespace gpumux {

namespace field_count_detail {

// Never defined: the conversion is only named in unevaluated operands. Clang still reports it undefined
// when a field's type has a constexpr converting constructor (std::optional's), which it instantiates.
#if defined(__clang__)
#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Wundefined-inline"
#endif
struct AnyField {
  template <typename T>
  constexpr operator T() const noexcept;  // NOLINT(google-explicit-constructor): the point of the type
};
#if defined(__clang__)
#pragma clang diagnostic pop
#endif

// T{a, b} with fewer values than fields is exactly what is being probed, not an oversight.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
template <typename T, typename... Args>
auto brace_constructible(int) -> decltype(void(T{std::declval<Args>()...}), std::true_type{});
template <typename T, typename... Args>
auto brace_constructible(...) -> std::false_type;
#pragma GCC diagnostic pop

}  // namespace field_count_detail

template <typename T, typename... Fields>
constexpr std::size_t field_count() {
  static_assert(std::is_aggregate_v<T>, "field_count needs an aggregate");
  using Next =
      decltype(field_count_detail::brace_constructible<T, Fields..., field_count_detail::AnyField>(0));
  if constexpr (Next::value) {
    return field_count<T, Fields..., field_count_detail::AnyField>();
  } else {
    return sizeof...(Fields);
  }
}

}  // namespace gpumux
