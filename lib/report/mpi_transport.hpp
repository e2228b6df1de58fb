// Which of OpenMPI's point-to-point layers a run used (the report's root attribute
// mpi_transport): the PML it selected and what the job asked of the PML, BTL and MTL frameworks.
// OpenMPI has no call that names the selected PML, so it is read through the MPI tool interface
// (MPI_T): a PML requested by one plain name is the one selected (the job fails otherwise);
// otherwise the PML whose performance variables are registered ("pml_ob1_..."), which only the
// selected one registers. The BTLs in use are not reported by MPI_T: their request is recorded.
#pragma once

#include <string>

namespace embscale::report {

// "pml ob1; requested: pml \"^ucx\", btl \"^uct,openib,ofi\", mtl \"^ofi\"" (a library without
// MPI_T control variables: what could be read, or "not reported"). Local: call on any rank after
// MPI_Init.
std::string mpi_transport_description();

}  // namespace embscale::report
