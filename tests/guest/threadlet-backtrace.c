// SPDX-License-Identifier: GPL-2.0
/*
 * backtrace() through a threadlet (the unwind information of
 * user/lib/switch_<arch>.asm).
 *
 * In place, the frame that called the threadlet's function is
 * tl_switch_run (threadlet_exec jumps to it, so threadlet_exec has no
 * frame of its own), and the walk goes on into the caller of
 * threadlet_exec() and main. A threadlet that blocks is in place until it
 * blocks, so the same holds before its read. After the hand-off its
 * frames on the head's stack belong to the new head, and the cache-miss
 * thread's walk must end at tl_switch_run: exactly take, the threadlet's
 * function and tl_switch_run, nothing of the head's callers, no crash.
 *
 * The test programs are static, where backtrace_symbols() has no names:
 * the return addresses are named from the program's own symbol table.
 */
#include <elf.h>
#include <execinfo.h>
#include <fcntl.h>
#include <link.h>
#include <stdint.h>
#include <sys/stat.h>
#include <threadlet.h>
#include <unistd.h>
#include "tl_test.h"

#define MAX_FRAMES 64

struct bt {
	int n;
	void *pc[MAX_FRAMES];
};

/* ---- naming addresses from /proc/self/exe's .symtab ------------------ */

static char *image;
static const ElfW(Sym) *syms;
static size_t nsyms;
static const char *symstr;
static uintptr_t bias;

static int find_bias(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	(void)data;
	bias = info->dlpi_addr;		/* the program comes first */
	return 1;
}

static int load_symbols(void)
{
	const ElfW(Ehdr) *eh;
	const ElfW(Shdr) *sh;
	struct stat st;
	int fd = open("/proc/self/exe", O_RDONLY);

	if (fd < 0 || fstat(fd, &st))
		return 0;
	image = malloc(st.st_size);
	if (!image || read(fd, image, st.st_size) != st.st_size) {
		close(fd);
		return 0;
	}
	close(fd);
	eh = (const ElfW(Ehdr) *)image;
	sh = (const ElfW(Shdr) *)(image + eh->e_shoff);
	for (int i = 0; i < eh->e_shnum; i++) {
		if (sh[i].sh_type != SHT_SYMTAB)
			continue;
		syms = (const ElfW(Sym) *)(image + sh[i].sh_offset);
		nsyms = sh[i].sh_size / sizeof(*syms);
		symstr = image + sh[sh[i].sh_link].sh_offset;
	}
	dl_iterate_phdr(find_bias, NULL);
	return syms != NULL;
}

/*
 * The function around @addr: the FUNC symbol that starts closest below it
 * and, if it has a size, contains it.
 */
static const char *name_of(uintptr_t addr)
{
	const ElfW(Sym) *best = NULL;

	addr -= bias;
	for (size_t i = 0; i < nsyms; i++) {
		const ElfW(Sym) *s = &syms[i];

		if (ELF64_ST_TYPE(s->st_info) != STT_FUNC || s->st_value > addr ||
		    (s->st_size && addr >= s->st_value + s->st_size))
			continue;
		if (!best || s->st_value > best->st_value)
			best = s;
	}
	return best ? symstr + best->st_name : "?";
}

/* The function of frame @i: a return address, so look just before it. */
static const char *frame(const struct bt *b, int i)
{
	return name_of((uintptr_t)b->pc[i] - 1);
}

static void show(const char *what, const struct bt *b)
{
	tl_diag("%s: %d frames", what, b->n);
	for (int i = 0; i < b->n; i++)
		tl_diag("  #%d %p %s", i, b->pc[i], frame(b, i));
}

/* 1 if frames @from.. of @b are the functions named in @names, in order. */
static int frames_are(const struct bt *b, int from, const char *const *names)
{
	for (int i = 0; names[i]; i++) {
		const char *f;

		if (from + i >= b->n)
			return 0;
		f = frame(b, from + i);
		if (!strcmp(f, names[i]))
			continue;
		/* Either name would do for the frame that calls fn. */
		if (strcmp(names[i], "tl_switch_run") || strcmp(f, "threadlet_exec"))
			return 0;
	}
	return 1;
}

static int frame_named(const struct bt *b, const char *name)
{
	for (int i = 0; i < b->n; i++)
		if (!strcmp(frame(b, i), name))
			return 1;
	return 0;
}

/* ---- the threadlets -------------------------------------------------- */

static struct async_head_user ahu;

/*
 * noipa: no inlining and no clones (foo.constprop.0), so that the frames
 * have these names; the stores after the calls keep them from being tail
 * calls.
 */
static __attribute__((noipa)) void take(struct bt *b)
{
	b->n = backtrace(b->pc, MAX_FRAMES);
	__asm__ volatile("" ::: "memory");
}

static struct bt bt_in_place;

static __attribute__((noipa)) long in_place_fn(void *data)
{
	take(&bt_in_place);
	return complete_threadlet_fn(data, &ahu);
}

struct blocker {
	int fd;
	char c;
	long n;
	pid_t tid_before, tid_after;
	struct bt before, after;
};

static __attribute__((noipa)) long blocking_fn(void *data)
{
	struct blocker *b = data;

	b->tid_before = gettid();
	take(&b->before);
	b->n = read(b->fd, &b->c, 1);
	b->tid_after = gettid();
	take(&b->after);
	return complete_threadlet_fn(b, &ahu);
}

static volatile long exec_ret, exec_calls;

static __attribute__((noipa)) void run_in_place(unsigned long stack, void *data)
{
	exec_ret = threadlet_exec(in_place_fn, data, stack, &ahu);
}

static struct bt bt_new_head;

static __attribute__((noipa)) void run_handoff(unsigned long stack, struct blocker *b)
{
	exec_ret = threadlet_exec(blocking_fn, b, stack, &ahu);
	take(&bt_new_head);
	exec_calls++;
}

int main(void)
{
	static const char *const in_place[] = {
		"take", "in_place_fn", "tl_switch_run", "run_in_place", "main", NULL
	};
	static const char *const before[] = {
		"take", "blocking_fn", "tl_switch_run", "run_handoff", "main", NULL
	};
	static const char *const after[] = {
		"take", "blocking_fn", "tl_switch_run", NULL
	};
	static const char *const new_head[] = { "take", "run_handoff", "main", NULL };
	unsigned long stack = threadlet_stack_alloc(64 << 10);
	unsigned long stack2 = threadlet_stack_alloc(64 << 10);
	static struct blocker b;
	pid_t tid = gettid();
	int pfd[2];
	long r;

	r = load_symbols();
	tl_ok(r, "the program's symbol table read (%zu symbols)", nsyms);
	tl_ok(stack && stack2, "two threadlet stacks");
	tl_ok(async_head_init(&ahu, 16, 2) == 0, "async_head_init(16 entries, 2 threads)");

	/* 1. In place. */
	run_in_place(stack, &b);
	show("in place", &bt_in_place);
	tl_ok(exec_ret == 1, "the threadlet ran in place (ret %ld)", exec_ret);
	tl_ok(bt_in_place.n > 0 && bt_in_place.n < MAX_FRAMES,
	      "in place: backtrace() ends (%d frames)", bt_in_place.n);
	tl_ok(frames_are(&bt_in_place, 0, in_place),
	      "in place: take <- in_place_fn <- tl_switch_run <- run_in_place <- main");

	/* 2. Blocking: in place before the read, a cache-miss thread after it. */
	tl_ok(pipe(pfd) == 0, "pipe");
	b.fd = pfd[0];
	run_handoff(stack, &b);
	r = exec_ret;
	tl_ok(r == 0 && gettid() == tid,
	      "the threadlet blocked: the head came back with 0 (ret %ld)", r);
	show("new head, after threadlet_exec() returned 0", &bt_new_head);
	tl_ok(frames_are(&bt_new_head, 0, new_head),
	      "new head: take <- run_handoff <- main");

	/* The new head's next threadlet, on another stack, unwinds as usual. */
	run_in_place(stack2, &b);
	show("in place, from the new head", &bt_in_place);
	tl_ok(exec_ret == 1 && frames_are(&bt_in_place, 0, in_place),
	      "new head, a threadlet in place: into run_in_place and main");

	tl_ok(write(pfd[1], "x", 1) == 1, "fill the pipe");
	r = async_wait(1, ahu.user_ring_idx, &ahu);
	tl_ok(r == 1 && async_ring_pop(&ahu) == &b && b.n == 1,
	      "the blocked threadlet completed (wait %ld, read %ld)", r, b.n);

	show("before the read", &b.before);
	tl_ok(b.tid_before == tid && frames_are(&b.before, 0, before),
	      "before the read (the head): take <- blocking_fn <- tl_switch_run <- run_handoff <- main");
	show("after the read, in the cache-miss thread", &b.after);
	tl_ok(b.tid_after != tid && b.tid_after > 0,
	      "the read finished in a cache-miss thread (%d -> %d)", tid, b.tid_after);
	tl_ok(b.after.n == 3 && frames_are(&b.after, 0, after),
	      "cache-miss thread: exactly take <- blocking_fn <- tl_switch_run (%d frames)",
	      b.after.n);
	tl_ok(!frame_named(&b.after, "run_handoff") && !frame_named(&b.after, "main"),
	      "cache-miss thread: none of the head's frames");

	async_head_exit(&ahu);
	threadlet_stack_free(stack);
	threadlet_stack_free(stack2);
	return tl_exit();
}
