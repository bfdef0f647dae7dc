/* tpm2-tss: the Enhanced System API, the TCTI loader and the marshalling library. Only
   Sources/Slots/SealedFile/TPM2.swift imports this module. */
#include <tss2/tss2_esys.h>
#include <tss2/tss2_tctildr.h>
#include <tss2/tss2_mu.h>
