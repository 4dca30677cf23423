/*
 * page_cost.c -- what fresh memory costs on this machine: the first write to
 * each page of 1 GiB of private anonymous memory (small pages, then with
 * MADV_HUGEPAGE), the same again after the previous block was unmapped, and
 * of a POSIX shared-memory file in /dev/shm (what PostgreSQL's DSM and DSA
 * areas are made of), with its posix_fallocate.  A diagnostic for the
 * parallel fill, whose workers write into fresh DSA memory.
 *
 *   cc -O2 -o bench/page_cost bench/page_cost.c -lrt && bench/page_cost [MiB]
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "bench_clock.h"

static double
touch(char *p, size_t bytes)
{
	double		t = now_ms();

	for (size_t i = 0; i < bytes; i += 4096)
		p[i] = 1;
	return now_ms() - t;
}

static void
anon(const char *what, size_t bytes, int huge)
{
	char	   *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	double		first, again;

	if (p == MAP_FAILED)
	{
		perror("mmap");
		exit(1);
	}
	if (huge)
		madvise(p, bytes, MADV_HUGEPAGE);
	first = touch(p, bytes);
	again = touch(p, bytes);
	printf("%-40s first write %8.1f ms (%6.2f us per 4 KiB page), second %6.1f ms\n",
		   what, first, first * 1e3 / (bytes / 4096), again);
	munmap(p, bytes);
}

static void
shm(const char *what, size_t bytes)
{
	char		name[64];
	int			fd;
	double		t0, t_alloc, first, again;
	char	   *p;

	snprintf(name, sizeof(name), "/page_cost.%d", (int) getpid());
	fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL, 0600);
	if (fd < 0)
	{
		perror("shm_open");
		exit(1);
	}
	t0 = now_ms();
	if (ftruncate(fd, bytes) != 0 || posix_fallocate(fd, 0, bytes) != 0)
	{
		perror("ftruncate/posix_fallocate");
		exit(1);
	}
	t_alloc = now_ms() - t0;
	p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
	{
		perror("mmap shm");
		exit(1);
	}
	first = touch(p, bytes);
	again = touch(p, bytes);
	printf("%-40s posix_fallocate %7.1f ms, first write %8.1f ms (%6.2f us per page), second %6.1f ms\n",
		   what, t_alloc, first, first * 1e3 / (bytes / 4096), again);
	munmap(p, bytes);
	close(fd);
	shm_unlink(name);
}

int
main(int argc, char **argv)
{
	size_t		bytes = (size_t) (argc > 1 ? atoi(argv[1]) : 1024) << 20;

	printf("page_cost: %zu MiB\n", bytes >> 20);
	anon("anonymous, small pages", bytes, 0);
	anon("anonymous, small pages, again", bytes, 0);
	anon("anonymous, MADV_HUGEPAGE", bytes, 1);
	anon("anonymous, MADV_HUGEPAGE, again", bytes, 1);
	shm("/dev/shm file", bytes);
	shm("/dev/shm file, again", bytes);
	return 0;
}
