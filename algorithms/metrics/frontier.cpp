#include "algorithms/metrics/frontier.h"

#include <tuple>

namespace vbas
{

std::vector<char> paretoFront( const std::vector<CandidateScore> &candidates )
{
  // Pairwise: a comparison holds tens of candidates, not thousands.
  std::vector<char> front( candidates.size(), 1 );
  for ( std::size_t i = 0; i < candidates.size(); ++i )
    for ( const CandidateScore &other : candidates )
    {
      const CandidateScore &c = candidates[i];
      if ( other.suppressed <= c.suppressed && other.loss <= c.loss && ( other.suppressed < c.suppressed || other.loss < c.loss ) )
        front[i] = 0;
    }
  return front;
}

std::optional<std::size_t> recommend( const std::vector<CandidateScore> &candidates )
{
  std::optional<std::size_t> best;
  for ( std::size_t i = 0; i < candidates.size(); ++i )
    if ( candidates[i].meets && ( !best || std::make_tuple( candidates[i].loss, candidates[i].suppressed ) < std::make_tuple( candidates[*best].loss, candidates[*best].suppressed ) ) )
      best = i;
  return best;
}

} // namespace vbas
