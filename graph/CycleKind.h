// graph/: the kind of a cycle, from its shape. A cycle is a closed path of references: each step
// is a member and one word of it that points to the next member. Kinds, first match wins:
//   timer-target   a word labelled as a timer's target (EdgeLabel::kTimerTarget)
//   delegate       a word labelled as a delegate (kDelegate): an ivar named like one
//                  ("delegate", "dataSource", any case), whatever its class
//   block-self     a member is a clang Block: every heap pointer of a Block is a captured slot
//   function-self  a member is a std::function's heap functor: a lambda capturing its owner
//   shared_ptr     a word through a shared_ptr control block (kSharedOwner, kSharedManaged)
//   generic        anything else
// The labels are the readers' (scanner/types). Which references a cycle may take is decided
// before: a retain cycle takes owning references only (graph/StrongReferences: the
// delegate-is-weak convention keeps a weak-named ivar out), while a leaked cycle takes any
// reference, since its being leaked proves that every reference on it held. May include heap/,
// roots/ and scanner/.
#pragma once

#include <span>

#include "scanner/types/ObjectModelReader.h"

namespace heapgraph::graph {

struct CycleStep {
  scanner::types::ClosureKind closure = scanner::types::ClosureKind::kNone;  // of the member
  scanner::types::EdgeLabel label =
      scanner::types::EdgeLabel::kNone;  // of its word; kNone: unknown
};

// The kind of a cycle whose steps (in any order; several per member allowed) are `steps`.
const char* CycleKind(std::span<const CycleStep> steps);

}  // namespace heapgraph::graph
