//! Table tests of the reconstructor, in virtual time.
