machine.package "test4" {compiler_version = "0.1.0", target_sha256 = "0000000000000000000000000000000000000000000000000000000000000000", tile_count = 4 : i64, memory_base = "0x4c000", memory_bytes = 638976 : i64, source_sha256 = "1111111111111111111111111111111111111111111111111111111111111111", entry_points = [{name = "main", command = 0 : i64, phases = 1 : i64}], steps = []}
machine.image tiles "0" {code_address = "0x4c000", code = "0x0000000033000000", entries = {main = "0x4c000"}, zero = [], data = []}
machine.tile_data {tile = 1 : i64, address = "0x80000", bytes = "0x00"}
