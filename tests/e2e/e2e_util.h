// Placeholder: the helpers test_e2e and test_faults share (being extracted from test_e2e.cpp).
#pragma once
