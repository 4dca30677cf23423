# GpuSortTest.pm -- helpers shared by gpusort's TAP tests (test/t/*.pl):
# a scratch cluster with gpusort preloaded, the GPU's presence and memory,
# and result checksums to compare GpuSort against the native Sort.
package GpuSortTest;

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

# A started cluster named $name with gpusort in shared_preload_libraries,
# every eligible Sort replaced (gpusort.min_rows = 0, gpusort.cost_model = off), and $extra appended
# to its configuration.
sub new_node
{
	my ($name, $extra) = @_;
	my $node = PostgreSQL::Test::Cluster->new($name);
	$node->init;
	$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'gpusort'
gpusort.min_rows = 0
gpusort.cost_model = off
max_connections = 60
jit = off
log_min_messages = warning
} . ($extra // ''));
	$node->start;
	$node->safe_psql('postgres', 'CREATE EXTENSION gpusort');
	return $node;
}

# Does the server see a usable GPU?
sub has_gpu
{
	my ($node) = @_;
	return $node->safe_psql('postgres', 'SELECT count(*) FROM gpusort_devices()') > 0;
}

# Device memory in use (MB, all processes), or undef without nvidia-smi.
sub gpu_memory_used_mb
{
	my $out = `nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits 2>/dev/null`;
	return undef if $? != 0 || $out !~ /^\s*(\d+)/;
	return $1;
}

# An order-sensitive checksum of a query's rows, and their count, after
# $settings (SQL), with GpuSort on or off.
sub checksum
{
	my ($node, $settings, $query, $gpusort_on, $db) = @_;
	my $on = $gpusort_on ? 'on' : 'off';
	return $node->safe_psql($db // 'postgres', qq{
$settings
SET gpusort.enabled = $on;
SELECT md5(coalesce(string_agg(s::text, '|'), '')) || ' ' || count(*) FROM ($query) s;
});
}

1;
