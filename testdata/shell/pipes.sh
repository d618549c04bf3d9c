# pipes, redirections, subshells, command substitution, wait, exit codes
printf 'b\na\nc\n' | sort | head -2
echo "lines: $(printf '1\n2\n3\n' | wc -l)"
( echo in-subshell; exit 5 ); echo "status $?"
{ echo grouped; echo to-stderr 1>&2; } 2>&1 | cat
f=/tmp/uvm-shell-$$; echo written > $f; read line < $f; echo "read: $line"; rm -f $f
sh -c 'exit 7'; echo "child sh: $?"
sh -c 'kill -TERM $$'; echo "killed child: $?"
for n in 3 1 2; do (echo "job $n" > /tmp/uvm-job-$$-$n) & done; wait; cat /tmp/uvm-job-$$-*; rm -f /tmp/uvm-job-$$-*; echo "all jobs done"
i=0; while [ $i -lt 100 ]; do i=$((i+1)); done; echo "loop: $i"
case "uvm" in u*) echo "case ok";; *) echo "case bad";; esac
echo $(( 6 * 7 ))
exit 3
