// Prints the tables that embednorm_kernels.cu exports (tuning.cuh), one a line: the table's name,
// then its values. describe-kernels.sh writes them into the test classes, where the planner's tests
// read them without a GPU; a GPU test checks that the loaded module holds the same.

#include <cstdio>

#include "tuning.cuh"

namespace {

template <int N>
void print(const char* name, const embednorm::Table<N>& table) {
  std::printf("%s", name);
  for (int i = 0; i < N; ++i) std::printf(" %d", table.values[i]);
  std::printf("\n");
}

}  // namespace

int main() {
#define EMBEDNORM_PRINT(NAME, BUILDER)                          \
  {                                                             \
    static constexpr auto kTable = embednorm::BUILDER();        \
    print(#NAME, kTable);                                       \
  }
  EMBEDNORM_TUNING_TABLES(EMBEDNORM_PRINT)
#undef EMBEDNORM_PRINT
  return 0;
}
