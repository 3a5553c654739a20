#include <cstdio>
int main() { std::puts("foxhunt-cli"); return 0; }
