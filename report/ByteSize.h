// report/: ByteSize moved to reader/ByteSize.h (reader's CategoryName formats sizes with it). This
// header only forwards for tools/heapgraph.cc, which another change is rewriting: delete it once
// tools/ includes "reader/ByteSize.h".
#pragma once

#include "reader/ByteSize.h"
