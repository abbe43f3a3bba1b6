"""Methods of dlsched declared by an installed package."""
