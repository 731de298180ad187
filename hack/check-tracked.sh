#!/usr/bin/env bash
# Fails when git tracks a file over 1 MiB or a built binary (ELF, Mach-O, PE, an ar archive):
# build outputs go under bin/ or dist/, never into a commit (a 77 MB kubectl-kvbench was once
# tracked, and every clone downloads it). Run by make verify.
set -euo pipefail
cd "$(dirname "$0")/.."
git ls-files -z | perl -0ne '
	chomp; next unless -f $_;
	my $size = -s _;
	if ($size > 1 << 20) { print "check-tracked: $_ is $size bytes, over 1 MiB: keep it out of git (bin/, dist/ or a cache)\n"; $bad = 1 }
	open(my $fh, "<:raw", $_) or next; read($fh, my $m, 8); close $fh;
	if ($m =~ /^(\x7fELF|\xcf\xfa\xed\xfe|\xce\xfa\xed\xfe|\xfe\xed\xfa\xcf|MZ|!<arch>)/) { print "check-tracked: $_ is a built binary: keep build outputs out of git\n"; $bad = 1 }
	END { exit($bad ? 1 : 0) }'
