int ext(int a, ...) { return a + 1; }
void *ext_p(void *p) { return p; }
