/* System V IPC: shared memory (private and keyed, IPC_CREAT/IPC_EXCL,
 * IPC_STAT/IPC_SET/IPC_RMID with the segment living on until the last
 * detach, shmat at NULL and at a fixed address with SHM_RND, SHM_RDONLY,
 * fork inheriting attachments, /proc/self/maps naming), semaphores
 * (SETVAL/GETVAL/SETALL/GETALL, blocking semop woken by another process,
 * IPC_NOWAIT, semtimedop timeout, SEM_UNDO at exit, IPC_RMID), message
 * queues (types, MSG_EXCEPT, negative types, MSG_NOERROR, E2BIG,
 * IPC_NOWAIT, blocking receive). Prints no ids, keys or times. */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/msg.h>
#include <sys/sem.h>
#include <sys/shm.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

union semun { int val; struct semid_ds *buf; unsigned short *array; };

static void check(const char *what, long r) {
	if (r < 0) printf("%s: -1 %s\n", what, strerrorname_np(errno));
	else printf("%s: ok\n", what);
}

static int maps_has_sysv(void) {
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];
	int n = 0;
	while (fgets(line, sizeof line, f))
		if (strstr(line, "/SYSV") && strstr(line, "(deleted)") && strstr(line, "rw-s")) n++;
	fclose(f);
	return n;
}

static void shm_tests(key_t key) {
	int id = shmget(IPC_PRIVATE, 10000, IPC_CREAT | 0600);
	check("shmget private", id);
	struct shmid_ds ds;
	shmctl(id, IPC_STAT, &ds);
	printf("segsz %zu nattch %lu mode %o\n", (size_t)ds.shm_segsz, (unsigned long)ds.shm_nattch, ds.shm_perm.mode & 0777);
	char *p = shmat(id, NULL, 0);
	check("shmat NULL", p == (void *)-1 ? -1 : 0);
	printf("zero-filled %d\n", p[0] == 0 && p[9999] == 0);
	strcpy(p, "hello shm");
	shmctl(id, IPC_STAT, &ds);
	printf("nattch after attach %lu, atime set %d\n", (unsigned long)ds.shm_nattch, ds.shm_atime != 0);
	printf("maps shows %d SYSV mapping(s)\n", maps_has_sysv());
	/* second attach sees the same bytes (read-write: uvm keeps one
	 * permission per shared page, so this program never maps one
	 * segment with two protections at once) */
	char *q = shmat(id, NULL, 0);
	printf("second attach reads \"%s\"\n", q);
	shmctl(id, IPC_STAT, &ds);
	printf("nattch %lu\n", (unsigned long)ds.shm_nattch);
	shmdt(q);
	/* fork inherits the attachment; the child's write is seen here */
	pid_t c = fork();
	if (c == 0) {
		struct shmid_ds cd;
		shmctl(id, IPC_STAT, &cd);
		printf("child sees \"%s\", nattch %lu\n", p, (unsigned long)cd.shm_nattch);
		strcpy(p, "from child");
		fflush(stdout);
		_exit(0);
	}
	int st;
	waitpid(c, &st, 0);
	printf("parent sees \"%s\"\n", p);
	shmctl(id, IPC_STAT, &ds);
	printf("nattch after child exit %lu\n", (unsigned long)ds.shm_nattch);
	/* IPC_SET */
	ds.shm_perm.mode = 0640;
	check("IPC_SET", shmctl(id, IPC_SET, &ds));
	shmctl(id, IPC_STAT, &ds);
	printf("mode now %o\n", ds.shm_perm.mode & 0777);
	/* removal while attached: stays until the last detach */
	check("IPC_RMID attached", shmctl(id, IPC_RMID, NULL));
	check("IPC_STAT after rmid", shmctl(id, IPC_STAT, &ds));
	printf("dest flag %d, still reads \"%s\"\n", (ds.shm_perm.mode & SHM_DEST) != 0, p);
	check("shmdt", shmdt(p));
	check("IPC_STAT after last detach", shmctl(id, IPC_STAT, &ds));
	check("shmdt again", shmdt(p));

	/* keys */
	int k1 = shmget(key, 4096, IPC_CREAT | IPC_EXCL | 0600);
	check("shmget key create", k1);
	check("shmget key excl", shmget(key, 4096, IPC_CREAT | IPC_EXCL | 0600));
	int k2 = shmget(key, 0, 0);
	printf("same id by key %d\n", k1 == k2);
	check("shmget key too big", shmget(key, 8192, 0));
	check("shmget missing", shmget(key + 1, 4096, 0));
	check("shmget size 0", shmget(IPC_PRIVATE, 0, IPC_CREAT | 0600));
	/* fixed address with SHM_RND */
	char *area = mmap(NULL, 1 << 20, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	munmap(area, 1 << 20);
	char *want = area + 4096 * 3;
	check("shmat unaligned", shmat(k1, want + 100, 0) == (void *)-1 ? -1 : 0);
	char *got = shmat(k1, want + 100, SHM_RND);
	printf("SHM_RND rounds down %d\n", got == want);
	check("shmat over existing", shmat(k1, want, 0) == (void *)-1 ? -1 : 0);
	got[0] = 'x';
	shmdt(got);
	/* SHM_RDONLY: a store faults */
	c = fork();
	if (c == 0) {
		volatile char *r = shmat(k1, NULL, SHM_RDONLY);
		printf("rdonly reads '%c'\n", r[0]);
		fflush(stdout);
		r[0] = 'y';
		_exit(0);
	}
	waitpid(c, &st, 0);
	printf("rdonly store: signaled %d sig %d\n", WIFSIGNALED(st), WTERMSIG(st));
	check("IPC_RMID key", shmctl(k1, IPC_RMID, NULL));
	check("shmget after rmid", shmget(key, 4096, 0));
	check("shmctl bad id", shmctl(k1, IPC_STAT, &ds));
}

static void sem_tests(key_t key) {
	int id = semget(IPC_PRIVATE, 3, IPC_CREAT | 0600);
	check("semget", id);
	union semun a;
	unsigned short vals[3] = {1, 2, 3};
	a.array = vals;
	check("SETALL", semctl(id, 0, SETALL, a));
	memset(vals, 0, sizeof vals);
	semctl(id, 0, GETALL, a);
	printf("GETALL %u %u %u\n", vals[0], vals[1], vals[2]);
	a.val = 5;
	check("SETVAL", semctl(id, 1, SETVAL, a));
	printf("GETVAL %d\n", semctl(id, 1, GETVAL));
	a.val = 40000;
	check("SETVAL range", semctl(id, 1, SETVAL, a));
	struct semid_ds ds;
	a.buf = &ds;
	semctl(id, 0, IPC_STAT, a);
	printf("nsems %lu mode %o\n", (unsigned long)ds.sem_nsems, ds.sem_perm.mode & 0777);
	struct sembuf op = {0, -1, 0};
	check("semop down", semop(id, &op, 1));
	op.sem_flg = IPC_NOWAIT;
	check("semop nowait", semop(id, &op, 1));
	struct timespec ts = {0, 20000000};
	op.sem_flg = 0;
	check("semtimedop timeout", semtimedop(id, &op, 1, &ts));
	/* atomic: the second op fails so the first is not applied */
	struct sembuf two[2] = {{1, -1, IPC_NOWAIT}, {2, -10, IPC_NOWAIT}};
	check("semop atomic", semop(id, two, 2));
	printf("sem1 still %d\n", semctl(id, 1, GETVAL));
	check("semop bad num", semop(id, &(struct sembuf){7, 1, 0}, 1));
	/* blocking: a child posts after a while */
	pid_t c = fork();
	if (c == 0) {
		usleep(50000);
		struct sembuf up = {0, 2, 0};
		semop(id, &up, 1);
		_exit(0);
	}
	struct sembuf down2 = {0, -2, 0};
	check("semop blocking", semop(id, &down2, 1));
	int st;
	waitpid(c, &st, 0);
	printf("GETPID is self %d\n", semctl(id, 0, GETPID) == getpid());
	/* wait-for-zero */
	c = fork();
	if (c == 0) {
		usleep(50000);
		struct sembuf dn = {2, -3, 0};
		semop(id, &dn, 1);
		_exit(0);
	}
	struct sembuf z = {2, 0, 0};
	check("semop wait zero", semop(id, &z, 1));
	waitpid(c, &st, 0);
	/* SEM_UNDO: the child's +4 is undone at its exit */
	c = fork();
	if (c == 0) {
		struct sembuf up = {1, 4, SEM_UNDO};
		semop(id, &up, 1);
		printf("child sees %d\n", semctl(id, 1, GETVAL));
		fflush(stdout);
		_exit(0);
	}
	waitpid(c, &st, 0);
	printf("after undo %d\n", semctl(id, 1, GETVAL));
	/* keyed */
	int k = semget(key, 2, IPC_CREAT | IPC_EXCL | 0600);
	check("semget key", k);
	printf("same by key %d\n", semget(key, 1, 0) == k);
	check("semget key nsems too big", semget(key, 5, 0));
	check("semget excl", semget(key, 2, IPC_CREAT | IPC_EXCL | 0600));
	semctl(k, 0, IPC_RMID);
	/* removal wakes a waiter with EIDRM */
	c = fork();
	if (c == 0) {
		struct sembuf dn = {1, -100, 0};
		int r = semop(id, &dn, 1);
		printf("waiter: %d %s\n", r, strerrorname_np(errno));
		fflush(stdout);
		_exit(0);
	}
	usleep(50000);
	int rr = semctl(id, 0, IPC_RMID);
	waitpid(c, &st, 0);
	check("sem IPC_RMID", rr);
	check("GETVAL removed", semctl(id, 0, GETVAL));
}

struct msg { long type; char text[64]; };

static void msg_tests(key_t key) {
	int q = msgget(IPC_PRIVATE, IPC_CREAT | 0600);
	check("msgget", q);
	struct msg m;
	for (int i = 1; i <= 4; i++) {
		m.type = i % 3 + 1;
		snprintf(m.text, sizeof m.text, "message %d", i);
		msgsnd(q, &m, strlen(m.text) + 1, 0);
	}
	struct msqid_ds ds;
	msgctl(q, IPC_STAT, &ds);
	printf("qnum %lu cbytes %lu\n", (unsigned long)ds.msg_qnum, (unsigned long)ds.__msg_cbytes);
	ssize_t n = msgrcv(q, &m, sizeof m.text, 3, 0);
	printf("type 3: %zd \"%s\"\n", n, m.text);
	n = msgrcv(q, &m, sizeof m.text, -2, 0);
	printf("type <=2: %ld \"%s\"\n", m.type, m.text);
	n = msgrcv(q, &m, sizeof m.text, 3, MSG_EXCEPT);
	printf("except 3: %ld \"%s\"\n", m.type, m.text);
	check("msgrcv E2BIG", msgrcv(q, &m, 3, 0, 0));
	n = msgrcv(q, &m, 3, 0, MSG_NOERROR);
	printf("noerror: %zd \"%.3s\"\n", n, m.text);
	check("msgrcv nowait empty", msgrcv(q, &m, sizeof m.text, 0, IPC_NOWAIT));
	m.type = 0;
	check("msgsnd type 0", msgsnd(q, &m, 4, 0));
	pid_t c = fork();
	if (c == 0) {
		usleep(50000);
		struct msg r = {7, "late"};
		msgsnd(q, &r, 5, 0);
		_exit(0);
	}
	n = msgrcv(q, &m, sizeof m.text, 7, 0);
	printf("blocking receive: %ld \"%s\"\n", m.type, m.text);
	int st;
	waitpid(c, &st, 0);
	/* a full queue: IPC_NOWAIT is EAGAIN */
	msgctl(q, IPC_STAT, &ds);
	ds.msg_qbytes = 100;
	check("msg IPC_SET", msgctl(q, IPC_SET, &ds));
	char big[128] = {0};
	*(long *)big = 1;
	check("msgsnd fits", msgsnd(q, big, 60, IPC_NOWAIT));
	check("msgsnd full", msgsnd(q, big, 60, IPC_NOWAIT));
	int k = msgget(key, IPC_CREAT | 0600);
	printf("same by key %d\n", msgget(key, 0) == k);
	msgctl(k, IPC_RMID, NULL);
	check("msg IPC_RMID", msgctl(q, IPC_RMID, NULL));
	check("msgsnd removed", msgsnd(q, big, 10, 0));
}

int main(void) {
	setvbuf(stdout, NULL, _IOLBF, 0);
	key_t key = 0x75760000 + (getpid() & 0xffff) * 4;
	shm_tests(key);
	sem_tests(key + 1);
	msg_tests(key + 2);
	return 0;
}
