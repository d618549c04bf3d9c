/* The mount table as a confined guest sees it (cmd/uvm TestMounts): the
   mount points, ro/rw, the virtual file systems' types and each mount's
   parent, from /proc/self/mountinfo, /proc/mounts and /proc/self/mounts,
   host-specific fields (ids, devices, disk types, sources) left out. */
#include <stdio.h>
#include <string.h>

static int virt(const char *t) { return !strcmp(t, "proc") || !strcmp(t, "devtmpfs"); }

int main(void) {
	char line[4096], pts[64][1024];
	int ids[64], n = 0;
	FILE *f = fopen("/proc/self/mountinfo", "r");
	if (!f) { puts("mountinfo: open failed"); return 1; }
	while (n < 64 && fgets(line, sizeof line, f)) {
		int id, parent, maj, min; char root[1024], pt[1024], opts[1024], rest[2048];
		if (sscanf(line, "%d %d %d:%d %1023s %1023s %1023s %2047[^\n]", &id, &parent, &maj, &min, root, pt, opts, rest) != 8) {
			printf("mountinfo: bad line %s", line); return 1;
		}
		char *sep = strstr(rest, "- ");
		char type[256], src[1024], sup[1024];
		if (!sep || sscanf(sep + 2, "%255s %1023s %1023s", type, src, sup) != 3) { printf("mountinfo: no separator %s", line); return 1; }
		ids[n] = id; strcpy(pts[n], pt);
		const char *par = "-";
		for (int i = 0; i < n; i++) if (ids[i] == parent) par = pts[i];
		printf("mountinfo %s %.2s %s parent=%s root=%c\n", pt, opts, virt(type) ? type : "disk", par, root[0]);
		n++;
	}
	fclose(f);
	const char *files[] = {"/proc/mounts", "/proc/self/mounts"};
	for (int k = 0; k < 2; k++) {
		f = fopen(files[k], "r");
		if (!f) { printf("%s: open failed\n", files[k]); return 1; }
		while (fgets(line, sizeof line, f)) {
			char src[1024], pt[1024], type[256], opts[1024]; int a, b;
			if (sscanf(line, "%1023s %1023s %255s %1023s %d %d", src, pt, type, opts, &a, &b) != 6) { printf("%s: bad line %s", files[k], line); return 1; }
			printf("%s %s %.2s %s %d %d\n", files[k], pt, opts, virt(type) ? type : "disk", a, b);
		}
		fclose(f);
	}
	return 0;
}
