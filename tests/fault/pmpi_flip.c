/*
 * Fault injection for tests: an LD_PRELOAD library that wraps MPI_Sendrecv
 * (through MPI's profiling interface, PMPI) and flips one bit of the data
 * received by the RB_FLIP_CALL-th call on rank RB_FLIP_RANK, so that a test
 * can see the checker count exactly the elements that were corrupted.
 */
#include <stdlib.h>

#include <mpi.h>

int MPI_Sendrecv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag, void *recvbuf,
                 int recvcount, MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm, MPI_Status *status)
{
    static long calls;
    int rc = PMPI_Sendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype, source,
                           recvtag, comm, status);
    const char *want_rank = getenv("RB_FLIP_RANK"), *want_call = getenv("RB_FLIP_CALL");
    int rank;
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (want_rank && want_call && rank == atoi(want_rank) && ++calls == atol(want_call) && recvcount > 0)
        ((unsigned char *)recvbuf)[0] ^= 0x04; /* the low bits of element 0: still a number, a different one */
    return rc;
}
