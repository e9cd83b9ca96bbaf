#!/bin/bash
# mpi-staged.sh R CMD... — runs CMD with the Open MPI that tools/gpu-pack.sh
# copied into R (the GPU machine has no Open MPI and no apt): Open MPI and
# PMIx relocated to R, its libraries first, shared memory between the
# ranks of one host, root allowed, oversubscription allowed.
R=$1; shift
export OPAL_PREFIX=$R/usr PMIX_INSTALL_PREFIX=$R/usr/lib/x86_64-linux-gnu/pmix2
export PATH=$R/usr/bin:$PATH LD_LIBRARY_PATH=$R/lib:$R/usr/lib/x86_64-linux-gnu/openmpi/lib:${LD_LIBRARY_PATH:-}
export OMPI_MCA_btl=self,vader OMPI_MCA_pml=ob1 OMPI_MCA_mtl=^ofi,psm,psm2 OMPI_MCA_osc=^ucx OMPI_MCA_btl_vader_single_copy_mechanism=none
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
exec "$@"
