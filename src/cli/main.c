/* main.c: the exactref command (placeholder until the CLI lands). */
#include <stdio.h>
#include "exactref/exactref.h"
int main(void) { printf("exactref %s\n", er_version()); return 0; }
