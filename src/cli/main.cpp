#include <cstdio>
int main() { std::puts("dcsgrid: CLI under construction"); return 1; }
